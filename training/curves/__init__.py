"""Training curves kept with the job: the watcher's reading of each job's lead log
(odh/training/logs/curves.py), stored by job uid (`TrainingCurves`), so a finished or
deleted job keeps them; the watch hub's part that reads the logs is
training/live/hub/keepers/curves.py, the pages read them through `stored_curves`."""
