"""Problem families (contracts) and their registered tasks: tasks/<family>/<task>.py."""
