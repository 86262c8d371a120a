"""The History screen: the journal's calls (`screen`), one call's page (`call`) and the
plain functions both draw from (`view`)."""
