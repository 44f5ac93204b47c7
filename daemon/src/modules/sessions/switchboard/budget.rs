//! An agent's budget is the thread's, every process of it together (ADR 0006, amended): what
//! a launch may still spend, refused when nothing is left or when the provider gives no price.

use super::*;
use crate::modules::sessions::agents::AgentProfile;

impl Switchboard {
    /// What an agent's thread may still spend (`None`: no budget), refused when nothing is
    /// left or when the provider would not say what its turns cost. The budget is the thread's,
    /// across its processes: a resumed Claude Code gets what is left as its
    /// `--max-budget-usd`, which it counts from its own start.
    pub(super) async fn budget_left(
        &self,
        thread: &str,
        req: &StartRequest,
        agent: Option<&AgentProfile>,
    ) -> Result<Option<f64>> {
        let Some((agent, budget)) = agent.and_then(|a| Some((&a.name, a.auth.budget_usd?))) else {
            return Ok(None);
        };
        if !self.router.get(&req.provider)?.prices(req.model.as_deref()) {
            return Err(Error::BudgetUnkept {
                agent: agent.clone(),
                provider: req.provider.clone(),
                what: match &req.model {
                    Some(model) => format!("model {model:?}"),
                    None => "its default model".into(),
                },
            });
        }
        let t = thread.to_string();
        let spent = self.read(move |c| Ok(rows::runs::spent(c, &t)?)).await?;
        // To the micro-dollar: the CLI repeats the figure in its words ("Reached maximum
        // budget ($0.00036)"), where a float's last digits say nothing. Less than that left
        // is nothing left (a flag of 0 is not a budget to count on).
        let left = ((budget - spent) * 1e6).round() / 1e6;
        if left <= 0.0 {
            return Err(Error::BudgetSpent {
                agent: agent.clone(),
                budget,
                spent,
            });
        }
        Ok(Some(left))
    }
}
