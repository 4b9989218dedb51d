"""Units of memory, one definition for the whole book: sizes in the book are binary units.

Support code (neither taught nor a check): taught modules and checks both use it, and a page
need not show two constants.
"""

ROLE = "support"

GIB = 2**30  # bytes in a gibibyte
MIB = 2**20  # bytes in a mebibyte
