//! An ask shows the person exactly what they approve: the command and the file, with only a matched credential masked.
