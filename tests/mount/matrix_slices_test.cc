// Slices of matrix stores through a real mount (see the file comment once filled).
