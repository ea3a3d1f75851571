"""Notifications: a person hears in the page (the bell) and by e-mail when their run, or a run of
a creation they follow, ends or waits for its workspace's quota, when someone comments on their
work or mentions them, and when they are invited to a workspace. Each kind is switched on or
off per person, in the page and by e-mail apart.

The rest of the platform does not call this package: it listens to the signals runs, comments
and invitations send (creations.notifications.receivers). One notification per event and person
(a unique key), one e-mail per notification, sent by a Celery task after the commit."""
