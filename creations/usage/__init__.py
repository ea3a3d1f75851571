"""What workspaces spend: the usage ledger (one record per ended run), the
month's figures read from it, and the quotas and budgets checked against them."""
