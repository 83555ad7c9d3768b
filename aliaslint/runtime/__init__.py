"""What runs with the program: the tracer, and the confirmation of static findings."""
