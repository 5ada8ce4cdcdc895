"""Page modules: the tables, figures' data and glued values that one chapter displays, so that a
chapter's cells call the library rather than define helpers of their own."""
