## Reports (SARIF, JUnit, JSON).
