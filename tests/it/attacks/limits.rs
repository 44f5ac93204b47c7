//! Bounded work: slow and idle connections, too many streams, huge queries; every call ends when its client goes or vyred stops.
