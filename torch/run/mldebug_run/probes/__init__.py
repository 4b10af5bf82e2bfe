"""One module per measurement; each writes its own records through `state.STATE.emit` and runs
under `state.probe`, so a failing probe switches itself off and never reaches the program."""
