//! Swiss pairing (FIDE Dutch system), initial ranking, standings, tie-breaks and TRF.
