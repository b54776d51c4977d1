import Grove

/// The trivial machine the benchmark pushes events through.
enum Counter: Machine {
    enum Event: Sendable {
        case increment
        case add(Int)
    }

    static var initialState: Int { 0 }

    static func update(_ state: inout Int, event: Event) -> Effect {
        switch event {
        case .increment: state &+= 1
        case .add(let amount): state &+= amount
        }
        return .none
    }
}
