public import Grove

/// Buys an item with points: TCA-SM's "Resource Validation" (seed 004), written as an
/// ``IOStateMachine`` with Codable types so that it runs on a worker.
///
/// The decision is the reducer's, as the seed writes it: with too few points the alert shows and
/// no IO starts; with enough, the points are taken at once and the purchase completes as IO. One
/// purchase runs at a time; a declined one gives the points back.
///
/// ```swift
/// let shop = MachineHost(IOMachine<PurchaseFeature>.self, env: PurchaseFeature { try await store.buy() })
/// shop.start()
/// try shop.send(.input(.purchase))
/// ```
public struct PurchaseFeature: IOStateMachine {
    /// The wallet and what the user sees.
    public struct State: Codable, Sendable, Equatable {
        /// Points left to spend.
        public var points: Int
        /// `true` after a purchase the points did not cover, until dismissed.
        public var showInsufficientPointsAlert = false
        /// `true` while a purchase completes.
        public var isPurchasing = false
        /// Purchases completed.
        public var purchases = 0
        /// Why the last purchase was declined.
        public var declined: String?

        public init(points: Int, showInsufficientPointsAlert: Bool = false, isPurchasing: Bool = false,
                    purchases: Int = 0, declined: String? = nil) {
            self.points = points
            self.showInsufficientPointsAlert = showInsufficientPointsAlert
            self.isPurchasing = isPurchasing
            self.purchases = purchases
            self.declined = declined
        }
    }

    /// What the user does.
    public enum Input: Codable, Sendable, Equatable {
        /// Buy one item for ``cost`` points.
        case purchase
        /// Close the insufficient-points alert.
        case dismissAlert
    }

    /// The IO the feature performs.
    public enum IOEffect: Codable, Sendable, Hashable {
        /// Tell the store about the purchase.
        case completePurchase
    }

    /// What the IO reports.
    public enum IOResult: Codable, Sendable, Equatable {
        /// The store recorded the purchase.
        case purchaseCompleted
        /// The store declined it; the points are given back.
        case purchaseDeclined(String)
    }

    /// What one item costs, in points.
    public static let cost = 30

    /// Records a purchase with the store; throws when the store declines it.
    public let completePurchase: @Sendable () async throws -> Void

    /// A feature completing purchases with `completePurchase`.
    public init(completePurchase: @escaping @Sendable () async throws -> Void) { self.completePurchase = completePurchase }

    /// A store that accepts every purchase: what `fsm-worker` hosts.
    public static let demo = PurchaseFeature {}

    public static var initialState: State { State(points: 100) }

    public static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch input {
        case .purchase:
            guard !state.isPurchasing else { return undefined }
            // Seed 004's text, with `isPurchasing` set beside the points.
            if state.points < cost {
                return nextState(withVar(state, \.showInsufficientPointsAlert, true))
            } else {
                return transition(
                    withVar(withVar(state, \.points, state.points - cost), \.isPurchasing, true),
                    effect: .completePurchase
                )
            }
        case .dismissAlert:
            guard state.showInsufficientPointsAlert else { return undefined }
            return nextState(withVar(state, \.showInsufficientPointsAlert, false))
        }
    }

    public static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        guard state.isPurchasing else { return undefined }
        var next = state
        next.isPurchasing = false
        switch ioResult {
        case .purchaseCompleted:
            next.purchases += 1
            next.declined = nil
        case .purchaseDeclined(let reason):
            next.points += cost
            next.declined = reason
        }
        return nextState(next)
    }

    public func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        switch ioEffect {
        case .completePurchase:
            do {
                try await completePurchase()
                return .purchaseCompleted
            } catch {
                return .purchaseDeclined("\(error)")
            }
        }
    }
}
