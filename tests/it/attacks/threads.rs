//! A session acts on its own thread only: other threads, their events, and other projects' history are refused.
