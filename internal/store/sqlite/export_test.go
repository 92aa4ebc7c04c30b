package sqlite

// SchemaVersion is the version a database opened here is brought to.
var SchemaVersion = len(migrations)
