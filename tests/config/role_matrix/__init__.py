"""The browser's role matrix's rows (tests/config/test_role_matrix.py), one module per area of the product.

`rows` says what a row is; each area's module lists its URLs' rows with the rules only they use
(the rules many rows share are in tests.support.role_outcomes). The test module gathers every
area's rows into the one table its tests and its completeness check read.
"""
