/// The machine that runs a SwiftTea reducer given as a value, a free function or a closure:
/// for a `Store` (GroveTea), a worker's `register(_:initialState:reduce:)` (GroveCluster) and
/// `ReducerTestStore(initialState:reduce:)` (GroveTesting). The reducer is a closure, so it travels in
/// the hosted state beside the user's state.
///
/// Not public: it has no static initial state, and every host of it is made with one (the
/// store's, the registration's). So `MachineHost(TeaStoreMachine.self)` does not compile
/// outside this package. A program that must be named as a type is a `TeaProgram` run as `Tea`.
///
/// What crosses processes is the user's state alone: `State` encodes as `current`, and decodes
/// only inside ``TeaReducerBinding/bound(to:_:)`` (a worker's registration binds its reducer while
/// it restores an instance), since the reducer is code and no record can carry it.
package enum TeaStoreMachine<S: Sendable, A: Sendable>: Machine {
    /// A reducer of the user's state and action.
    package typealias Reducer = @Sendable (S, A) -> (S, TeaEffect<A, Void>)

    /// The user's state, with the reducer that runs on it.
    @dynamicMemberLookup
    package struct State: Sendable {
        /// The user's state.
        package var current: S
        package let reduce: Reducer

        package init(current: S, reduce: @escaping Reducer) {
            self.current = current
            self.reduce = reduce
        }

        /// The user's state's members, so that a `TestStore`'s assertions read as the user's
        /// state: `$0.count = 1`.
        package subscript<T>(dynamicMember keyPath: WritableKeyPath<S, T>) -> T {
            get { current[keyPath: keyPath] }
            set { current[keyPath: keyPath] = newValue }
        }
    }

    package typealias Event = A

    /// Unreachable: the type is not public, and every host of it is given its initial state.
    package static var initialState: State {
        preconditionFailure("TeaStoreMachine is hosted only with the initial state its Store or registration passes")
    }

    package static func update(_ state: inout State, event: A) -> MachineEffect<TeaStoreMachine> {
        let (next, effect) = state.reduce(state.current, event)
        if case .unhandled = effect { return .unhandled }
        state.current = next
        return effect.machineEffect(for: TeaStoreMachine.self)
    }
}

extension TeaStoreMachine.State: Redacting {
    /// Secrets of the user's state, when its type adopts ``Redacting``.
    package static var holdsSecrets: Bool { Redaction.applies(to: S.self) }

    /// The user's state redacted, with the same reducer.
    package var redacted: Self { Self(current: Redaction.redact(current), reduce: reduce) }
}

/// The reducer a ``TeaStoreMachine`` state decodes with: bound by a worker's registration while
/// it decodes a stored record, so that no process-wide registry of reducers is needed.
package enum TeaReducerBinding {
    @TaskLocal private static var reducer: (any Sendable)?

    /// Runs `decode` with `reduce` as the reducer of every ``TeaStoreMachine`` state it decodes.
    package static func bound<S, A, R>(
        to reduce: @escaping TeaStoreMachine<S, A>.Reducer, _ decode: () throws -> R
    ) rethrows -> R {
        try $reducer.withValue(reduce, operation: decode)
    }

    static func current<S, A>(_ machine: TeaStoreMachine<S, A>.Type) -> TeaStoreMachine<S, A>.Reducer? {
        reducer as? TeaStoreMachine<S, A>.Reducer
    }
}

extension TeaStoreMachine.State: Equatable where S: Equatable {
    /// Equal when the user's states are: the reducer is the same for every state of a host.
    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.current == rhs.current }
}

extension TeaStoreMachine.State: CustomStringConvertible {
    package var description: String { String(describing: current) }
}

extension TeaStoreMachine.State: Encodable where S: Encodable {
    /// The user's state alone: what replies, snapshots and journals hold.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(current)
    }
}

extension TeaStoreMachine.State: Decodable where S: Decodable {
    /// The user's state, bound to the reducer of ``TeaReducerBinding/bound(to:_:)``.
    /// - Throws: `DecodingError.dataCorrupted` outside such a binding.
    package init(from decoder: any Decoder) throws {
        guard let reduce = TeaReducerBinding.current(TeaStoreMachine.self) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "a reducer's state decodes only with its reducer bound: decode it inside "
                    + "TeaReducerBinding.bound(to:_:), as a worker's register(_:initialState:reduce:) does"))
        }
        self.init(current: try decoder.singleValueContainer().decode(S.self), reduce: reduce)
    }
}
