// The libzmq wrapper lives here.
