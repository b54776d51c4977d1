// Seed 002, SwiftTea's "Advanced Patterns": "Feature-Based Organization" and "Action
// Composition", as written, with the imports added. `User`, `PostState`, `PostAction`,
// `postReducer`, `SettingsState`, `SettingsAction` and `settingsReducer` are the reader's
// (Support/ReaderTypes.swift). One change, marked below: `userReducer`'s body.
import Grove
import GroveTea

// UserFeature.swift
struct UserState {
var currentUser: User?
var isLoggedIn = false
}

enum UserAction: Sendable {
case login(String, String)
case logout
case userLoaded(User)
}

func userReducer(state: UserState, action: UserAction) -> (UserState, Effect<UserAction>) {
// Handle user-related actions
    // Not in the seed, whose body is only the comment above and does not compile (a function
    // returning a value needs a return). The smallest body that handles the three actions:
    var newState = state
    switch action {
    case .login: break
    case .logout: newState = UserState()
    case .userLoaded(let user):
        newState.currentUser = user
        newState.isLoggedIn = true
    }
    return (newState, .none)
}

// AppState combines all features
struct AppState {
var user = UserState()
var posts = PostState()
var settings = SettingsState()
}

enum AppAction: Sendable {
case user(UserAction)
case posts(PostAction)
case settings(SettingsAction)
}

func appReducer(state: AppState, action: AppAction) -> (AppState, Effect<AppAction>) {
switch action {
case .user(let userAction):
let (newUserState, userEffect) = userReducer(state: state.user, action: userAction)
var newState = state
newState.user = newUserState

return (newState, userEffect.map(AppAction.user))

case .posts(let postAction):
let (newPostState, postEffect) = postReducer(state: state.posts, action: postAction)
var newState = state
newState.posts = newPostState

return (newState, postEffect.map(AppAction.posts))

case .settings(let settingsAction):
let (newSettingsState, settingsEffect) = settingsReducer(state: state.settings, action: settingsAction)
var newState = state
newState.settings = newSettingsState

return (newState, settingsEffect.map(AppAction.settings))
}
}
