"""Reads that compare systems honestly, computed on the fly from system runs. Every number comes from
evalstats; these modules only gather the inputs from the database."""
