"""What every protocol does alike, written once and run against each reference server."""
