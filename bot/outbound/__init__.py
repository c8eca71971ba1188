"""What leaves a job is checked: limits on pushed commits, one secret scanner, agent text."""
