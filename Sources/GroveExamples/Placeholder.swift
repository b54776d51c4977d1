import Grove
