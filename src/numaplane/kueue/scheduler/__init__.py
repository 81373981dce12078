"""The scheduling cycle: flavor assignment, classical preemption, admission order."""
