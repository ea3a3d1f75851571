"""One module per command; each adds its parser (`register`) and does its work (`run`)."""
