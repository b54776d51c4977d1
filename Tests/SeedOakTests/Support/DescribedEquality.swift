// `TestStore` compares states and events. Seed 000's hold `any Error` (and `Data`, `Date`), which
// are not Equatable, so they compare by description, as seed 001's LoginFlow does in
// ReaderTypes.swift: enough for tests, whose errors have distinct descriptions. PollingService is
// left out: it does not run in TestStore (Seed000TestStoreTests says why).
import Grove

extension DataLoader.State: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension DataLoader.Event: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension AuthFlow.State: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension AuthFlow.Event: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension UserForm.State: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension UserForm.Event: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension AppNavigator.State: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension AppNavigator.Event: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}
