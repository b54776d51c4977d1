// Seed 001, Oak's "Understanding Finite State Machines": "Use Enums for Distinct States", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
//
// The seed shows a good and an avoided `ConnectionState` side by side; one module cannot declare
// both at the top level, so each sits in a caseless namespace, its text otherwise unchanged.

enum GoodConnectionExample {
    // Good: Mutually exclusive states
    enum ConnectionState {
        case disconnected
        case connecting
        case connected(Session)
        case reconnecting(lastSession: Session)
    }

}

enum AvoidedConnectionExample {
    // Avoid: Multiple properties that can create invalid combinations
    struct ConnectionState {
        var isConnected: Bool
        var isConnecting: Bool
        var session: Session?
        var isReconnecting: Bool
    }
}
