//! A hostile repository cannot redirect a Vyre session (its settings' env), and what vyred runs for sessions runs as the sessions' user.
