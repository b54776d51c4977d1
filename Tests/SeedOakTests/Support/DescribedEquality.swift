// `TestStore` compares states and events. Seed 000's hold `any Error`, which is not Equatable, so
// they compare by description, as seed 001's LoginFlow does in ReaderTypes.swift: enough for
// tests, whose errors have distinct descriptions. PollingService holds no error: its `Data`,
// `Date` and `TimeInterval` compare as themselves.
import Foundation
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

extension PollingService.State: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.idle, .idle): true
        case (.polling(let a, let b), .polling(let c, let d)), (.paused(let a, let b), .paused(let c, let d)): a == c && b == d
        case (.idle, _), (.polling, _), (.paused, _): false
        }
    }
}

extension PollingService.Event: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.startPolling(let a), .startPolling(let b)): a == b
        case (.stopPolling, .stopPolling), (.pausePolling, .pausePolling), (.resumePolling, .resumePolling), (.tick, .tick): true
        case (.dataUpdated(let a, let b), .dataUpdated(let c, let d)): a == c && b == d
        case (.startPolling, _), (.stopPolling, _), (.pausePolling, _), (.resumePolling, _), (.tick, _), (.dataUpdated, _): false
        }
    }
}
