"""Studies: what the command line and the app share (sampling, MEN, depth study, sweep,
tuning, the per-cell search). Each study takes settings, runs the method, and returns
tables; neither the CLI nor a page rebuilds one."""

__all__: list[str] = []  # nothing re-exported: import the modules by name
