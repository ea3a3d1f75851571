"""The API role matrix's rows (tests/api/test_role_matrix.py), one module per area of the product.

`rows` says what a row is and holds the rules that belong to no one area; each area's module lists its
operations' rows with the rules and checks only they use; `cases` gathers every area's rows into
the one table the tests and the completeness check read, and makes a row's cases and its URL.
"""
