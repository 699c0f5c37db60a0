"""Speed and speculation: the side panel with its gauge, the speculation choice, answer settings, the speed feed and the race."""
