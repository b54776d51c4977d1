// The multi-process runtime lives here.
