"""Shared graph algorithms (Cython): connectivity, paths, cycle counting."""
