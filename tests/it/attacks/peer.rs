//! A session is never a person on vyred's socket, whatever its processes do (fork and exit, setsid, a double fork), and it cannot leave its containment.
