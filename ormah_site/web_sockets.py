"""The values of ORMAH_WEB_SOCKETS (settings.ORMAH["WEB_SOCKETS"]), how more than one web worker listen: the system
check ormah.E007 (ormah_site.checks) refuses any other before `ormah serve` starts, and the gunicorn master
(ormah_site.gunicorn_conf.socket_per_worker) refuses it when started another way. A module of its own, so the checks
that every Django process runs do not import gunicorn's threaded worker with gunicorn_conf."""

WEB_SOCKETS = ("shared", "per-worker")
