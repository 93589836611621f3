"""The bots shipped with the package (package data, one bot directory per variant: tarocchi_rl.shipped)."""
