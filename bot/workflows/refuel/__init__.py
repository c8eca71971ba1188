"""The scheduled refuel run over the labelled backlog."""
