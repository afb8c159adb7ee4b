"""Settings for the live qcluster test: the real settings, with the guard cycle set so the first scheduler pass
runs as the cluster starts (django-q2 calls the scheduler once its guard loop has counted 30 seconds)."""

from ormah_site.settings import *  # noqa: F403
from ormah_site.settings import Q_CLUSTER

Q_CLUSTER = {**Q_CLUSTER, "guard_cycle": 30}
