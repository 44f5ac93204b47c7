//! The floor's hook fails closed: a session whose own vyred refuses or cannot be reached is denied, not waved through.
