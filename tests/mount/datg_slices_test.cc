// Slices of datg stores through a real mount (see the file comment once filled).
