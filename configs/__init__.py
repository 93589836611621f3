"""The training configs shipped with the package (package data: tarocchi_rl.shipped)."""
