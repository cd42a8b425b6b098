"""One backend per protocol behind one interface (`base.Backend`): what the UI talks to."""
