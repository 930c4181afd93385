"""No tasks of its own: lmms-eval adds a plugin's ``tasks`` folder to its task search path."""
