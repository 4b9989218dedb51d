
ROLE = "taught"
