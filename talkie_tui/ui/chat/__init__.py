"""The chat screen and the controllers it wires, one feature each."""
