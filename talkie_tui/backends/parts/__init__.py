"""What only some protocols offer, one part per module: a backend (or its session) implements
a part where its `Capabilities` say so, and the UI finds it with `isinstance` on the part's
runtime-checkable Protocol. The model objects a part hands over are here too: no wire record
of a protocol reaches the UI."""
