"""The Faust app, topics, tables, and the embedded dev stack."""
