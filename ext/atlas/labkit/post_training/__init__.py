ROLE = "taught"
