// Seed 002, SwiftTea's "Advanced Patterns": "State Normalization" and "Selective
// Subscriptions", as written. The two `AppState` declarations ("Instead of" and "Use") cannot
// share a module with each other or with "Feature-Based Organization"'s, so each sits in a
// caseless namespace enum, and the extension names the normalized one as
// `NormalizedExample.AppState`: the one change to the text. `Post` is the reader's.

enum NestedExample {
// Instead of nested arrays
struct AppState {
var posts: [Post] // Contains user data inline
}
}

enum NormalizedExample {
// Use normalized structure
struct AppState {
var posts: [Post.ID: Post]
var users: [User.ID: User]
var postIDs: [Post.ID]
}
}

extension NormalizedExample.AppState {
var visiblePosts: [Post] {
postIDs.compactMap { posts[$0] }
}
}
