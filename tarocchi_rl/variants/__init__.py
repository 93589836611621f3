"""One module per rule family: its tables, action table, phase kernels, scoring and observation layout."""
