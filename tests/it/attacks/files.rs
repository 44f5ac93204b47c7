//! vyred never writes through a link a session planted, and recall never leaves its roots through one.
